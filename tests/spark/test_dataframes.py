"""read_table / write_table (mapInArrow) and how scans become Spark partitions."""

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.errors import InvalidArgumentError, NotFoundError, SchemaError
from paimon_engine.expressions import col
from paimon_engine.spark import read_table, write_table
from paimon_engine.spark.planning import spark_split_size
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    """A SQL catalog with a partitioned table holding position and equality deletes, and a 2M-row table."""
    root = tmp_path_factory.mktemp("wh")
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=str(root))
    cat.create_namespace("db")
    n = 20_000
    data = pa.table({"id": pa.array(np.arange(n), pa.int64()), "k": pa.array(np.arange(n) % 4, pa.int32()),
                     "name": pa.array([f"n{i % 97}" for i in range(n)])})
    ev = cat.create_table("db.events", data.schema, [("k", "identity")],
                          properties={"write.target-file-size-bytes": str(60_000)})
    ev.append(data)
    ev.delete(col("id") < 100)
    ev.delete(col("name") == "n5", mode="equality", equality_columns=["name"])
    big = cat.create_table("db.big", pa.schema([("id", pa.int64()), ("v", pa.float64())]),
                           properties={"write.target-file-size-bytes": str(3 << 20)})
    m = 2_000_000
    big.append(pa.table({"id": pa.array(np.arange(m), pa.int64()), "v": pa.array(np.arange(m) * 0.5)}))
    big.delete(col("id") >= 1_999_000)
    props = {"uri": f"sqlite:///{root}/cat.db", "warehouse": str(root)}
    return cat, props


def _arrow(df):
    return pa.Table.from_batches(df._collect_as_arrow()) if hasattr(df, "_collect_as_arrow") else \
        pa.Table.from_pandas(df.toPandas(), preserve_index=False)


def test_read_table_equals_engine_read(spark, wh):
    cat, props = wh
    t = cat.load_table("db.events")
    df = read_table(spark, "db.events", **props)
    got = df.toPandas().sort_values("id")
    want = t.scan().to_arrow().to_pandas().sort_values("id")
    assert list(got.columns) == ["id", "k", "name"]
    assert got["id"].tolist() == want["id"].tolist() and got["name"].tolist() == want["name"].tolist()
    flt = read_table(spark, "db.events", row_filter="k = 1 and id < 300", selected_fields=["id"], **props)
    assert flt.columns == ["id"]
    assert sorted(r.id for r in flt.collect()) == [i for i in range(100, 300) if i % 4 == 1 and i % 97 != 5]
    assert flt.rdd.getNumPartitions() >= 1
    first = t.snapshots()[0].snapshot_id
    assert read_table(spark, "db.events", snapshot_id=first, **props).count() == 20_000


def test_read_table_then_filtered_and_unfiltered(spark, wh):
    cat, props = wh
    t = cat.load_table("db.events")
    df = read_table(spark, "db.events", **props)
    assert df.filter("k < 2").count() == t.scan(filter=col("k") < 2).count()
    assert df.count() == t.scan().count()


def test_splits_follow_spark_sizing(spark, wh):
    cat, props = wh
    big = cat.load_table("db.big")
    assert spark.sparkContext.defaultParallelism == 4
    df = read_table(spark, "db.big", **props)
    assert df.rdd.getNumPartitions() >= 4
    assert df.count() == 1_999_000 == big.scan().count()
    assert df.agg({"id": "sum"}).collect()[0][0] == sum(range(1_999_000))
    # the same through the data source bound to the session (Spark 4)
    import importlib.util
    if importlib.util.find_spec("pyspark.sql.datasource") is None:
        return
    from paimon_engine.spark import register
    register(spark)
    src = spark.read.format("paimon_engine").option("catalog.uri", props["uri"]) \
        .option("catalog.warehouse", props["warehouse"]).load("db.big")
    assert src.rdd.getNumPartitions() >= 4 and src.count() == 1_999_000
    # an explicit split-size wins; one small file gives one partition
    assert read_table(spark, "db.big", split_size=1 << 40, **props).rdd.getNumPartitions() == 1
    loc = str(cat.load_table("db.events").location) + "-small"
    small = FileSystemCatalog(loc.rsplit("/", 1)[0]).create_table_at(loc, pa.schema([("id", pa.int64())]))
    small.append(pa.table({"id": pa.array(range(10), pa.int64())}))
    assert read_table(spark, loc).rdd.getNumPartitions() == 1
    assert spark.read.format("paimon_engine").load(loc).rdd.getNumPartitions() == 1


def test_split_size_rule():
    assert spark_split_size(10 << 30, 128 << 20, 4 << 20, 4) == 128 << 20
    assert spark_split_size(100 << 20, 128 << 20, 4 << 20, 4) == 25 << 20
    assert spark_split_size(1 << 20, 128 << 20, 4 << 20, 4) == 4 << 20


def test_write_table_append_and_overwrite(spark, tmp_path):
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = cat.create_table("db.w", pa.schema([("id", pa.int64()), ("g", pa.int32()), ("s", pa.string())]),
                         [("g", "identity")])
    props = {"uri": f"sqlite:///{tmp_path}/cat.db", "warehouse": str(tmp_path)}
    df = spark.range(0, 1000, numPartitions=3).selectExpr("id", "cast(id % 3 as int) AS g", "concat('s', id) AS s")
    snap = write_table(df, "db.w", **props)
    t.refresh()
    assert snap.snapshot_id == t.current_snapshot().snapshot_id and len(t.snapshots()) == 1
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == list(range(1000))
    assert {f.data_file.partition[0] if isinstance(f.data_file.partition, (list, tuple)) else None
            for f in t.data_files()} <= {0, 1, 2}
    assert len(t.scan(filter=col("g") == 1).plan_files()) < len(t.scan().plan_files())
    write_table(spark.range(0, 5).selectExpr("id + 5000 AS id", "cast(1 as int) AS g"), "db.w",
                mode="overwrite", overwrite_filter=col("g") == 1, **props)
    t.refresh()
    ids = t.scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == sorted([i for i in range(1000) if i % 3 != 1] + list(range(5000, 5005)))
    write_table(spark.range(0, 3).selectExpr("id", "cast(0 as int) AS g"), "db.w", mode="overwrite", **props)
    t.refresh()
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2]


def test_write_table_failed_job_commits_nothing_and_leaves_no_files(spark, tmp_path):
    from pyspark.sql.functions import udf
    loc = str(tmp_path / "t")
    t = FileSystemCatalog(str(tmp_path)).create_table_at(loc, pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array(range(10), pa.int64())}))

    @udf("long")
    def boom(x):
        if x == 99_999:
            raise ValueError("task failure")
        return x
    # three of four tasks finish and write their files; the last one fails
    bad = spark.range(0, 100_000, numPartitions=4).select(boom("id").alias("id"))
    with pytest.raises(Exception, match="task failure"):
        write_table(bad, loc)
    t.refresh()
    assert len(t.snapshots()) == 1 and t.scan().count() == 10
    data_files = [p for p in (tmp_path / "t" / "data").rglob("*") if p.is_file() and p.name != "_aborted"]
    assert len(data_files) == len(t.data_files()) == 1


def test_task_of_an_aborted_job_removes_its_own_files(tmp_path):
    """Files under the job directory; the abort deletes them and leaves the marker; a task that reaches the
    marker check after the abort writes nothing that stays."""
    from paimon_engine.spark.writing import JobAbortedError, abort_job, job_data_path, write_job_files
    loc = str(tmp_path / "t")
    t = FileSystemCatalog(str(tmp_path)).create_table_at(loc, pa.schema([("id", pa.int64())]))
    data = pa.table({"id": pa.array(range(10), pa.int64())})
    files = write_job_files(t, data, "j1")
    assert all(f.file_path.startswith(job_data_path(t, "j1") + "/") for f in files)
    assert abort_job(t.io, t, "j1") == len(files)
    with pytest.raises(JobAbortedError):
        write_job_files(t, data, "j1")
    assert [p.name for p in (tmp_path / "t").rglob("*") if p.is_file() and "metadata" not in p.parts] == \
        ["_aborted"]


def test_bad_input_is_reported_before_any_job(spark, wh, tmp_path):
    cat, props = wh
    with pytest.raises(NotFoundError, match=r"db\.nope.*SQL catalog 'default'"):
        read_table(spark, "db.nope", **props)
    with pytest.raises(NotFoundError, match="db.nope"):
        write_table(spark.range(1), "db.nope", **props)
    with pytest.raises(InvalidArgumentError, match="mode must be one of 'append', 'overwrite'"):
        write_table(spark.range(1), "db.events", mode="upsert", **props)
    with pytest.raises(InvalidArgumentError, match="split-size must be a positive number of bytes"):
        read_table(spark, "db.events", split_size="big", **props)
    t = cat.load_table("db.events")
    before = {p for p in (tmp_path.parent).rglob("*") if p.is_file()}
    with pytest.raises(SchemaError, match="'name'"):
        write_table(spark.range(3).selectExpr("id", "cast(1 as int) AS k", "cast(id as double) AS name"),
                    "db.events", **props)
    with pytest.raises(SchemaError, match="'extra'"):
        write_table(spark.range(3).selectExpr("id", "1 AS extra"), "db.events", **props)
    t.refresh()
    assert len(t.snapshots()) == 3
    assert {p for p in (tmp_path.parent).rglob("*") if p.is_file()} == before


def test_job_ids_cannot_leave_the_data_directory():
    from types import SimpleNamespace

    from paimon_engine.errors import InvalidArgumentError
    from paimon_engine.spark.writing import job_data_path, new_job_id
    t = SimpleNamespace(properties={}, location="/wh/db/t")
    assert job_data_path(t, "abc-1_2") == "/wh/db/t/data/spark-abc-1_2"
    assert job_data_path(t, new_job_id()).startswith("/wh/db/t/data/spark-")
    for bad in ("../../x", "a/b", "", "..", "a\x00b", "é"):
        with pytest.raises(InvalidArgumentError):
            job_data_path(t, bad)
