"""Spark: the ``paimon_engine`` data source, ``read_table``/``write_table`` and Spark's own Parquet reader over the
same files, in the same ``local[2]`` session (the ``impl`` values of ``PATHS``).

Workload: a table of 2,000,000 rows ``id int64, k int32 (1,000 distinct), v float64, s string`` written by the
engine as Parquet (no deletes, so the table's data files are exactly the table and ``spark.read.parquet`` over its
data directory reads the same rows). ``count``: ``df.count()``; ``scan``: every column into Spark's ``noop`` sink;
``filtered_agg``: ``k < 10`` then ``sum(v)`` grouped by ``k``, Spark evaluating the filter (the data source's
default up to Spark 4.3); ``filtered_agg_pruned``: the same query with the filter given to the engine the way
``docs/spark.md`` shows for pruned reads (``read_table(..., row_filter=...)``; the data source with option
``pushdown`` on a DataFrame used for that one query), planned inside the timing; ``write``: 500,000 rows appended
(engine paths) or written as Parquet (``spark_parquet``). ``track_partitions``: the Spark partition count of each
read path.
"""
import os
import shutil
import sys
import tempfile

N = 2_000_000
W = 500_000
#: the read and write paths, as the ``impl`` axis of the benchmark report: the engine's data source
#: (``paimon_engine``), its ``read_table``/``write_table`` (``paimon_engine_read_table``) and Spark's own Parquet
#: reader and writer over the same files (``spark_parquet``)
PATHS = ["paimon_engine", "paimon_engine_read_table", "spark_parquet"]


def _session():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.python.filterPushdown.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class SparkRead:
    params = [PATHS]
    param_names = ["impl"]
    timeout = 600
    number = 1
    repeat = 3

    def setup_cache(self):
        import numpy as np
        import pyarrow as pa

        from paimon_engine.catalog import FileSystemCatalog
        root = tempfile.mkdtemp(prefix="bench-spark-")
        loc = os.path.join(root, "t")
        rng = np.random.default_rng(1)
        data = pa.table({"id": pa.array(np.arange(N), pa.int64()), "k": pa.array(np.arange(N) % 1000, pa.int32()),
                         "v": rng.random(N), "s": pa.array([f"s{i % 977}" for i in range(N)])})
        t = FileSystemCatalog(root).create_table_at(loc, data.schema,
                                                    properties={"write.target-file-size-bytes": str(8 << 20)})
        t.append(data)
        return loc

    def setup(self, loc, impl):
        self.spark = _session()
        self.loc = loc
        if impl == "paimon_engine":
            self.df = self.spark.read.format("paimon_engine").load(loc)
        elif impl == "paimon_engine_read_table":
            from paimon_engine.spark import read_table
            self.df = read_table(self.spark, loc)
        else:
            self.df = self.spark.read.parquet(os.path.join(loc, "data"))

    def track_partitions(self, loc, impl):
        """Spark partitions of the path's DataFrame (the split sizing, next to the timings)."""
        return self.df.rdd.getNumPartitions()

    track_partitions.unit = "partitions"

    def time_count(self, loc, impl):
        assert self.df.count() == N

    def time_scan(self, loc, impl):
        self.df.write.format("noop").mode("overwrite").save()

    def time_filtered_agg(self, loc, impl):
        rows = self.df.filter("k < 10").groupBy("k").agg({"v": "sum"}).collect()
        assert len(rows) == 10

    def time_filtered_agg_pruned(self, loc, impl):
        if impl == "paimon_engine":
            df = self.spark.read.format("paimon_engine").option("pushdown", "true").load(loc).filter("k < 10")
        elif impl == "paimon_engine_read_table":
            from paimon_engine.spark import read_table
            df = read_table(self.spark, loc, row_filter="k < 10")
        else:
            df = self.df.filter("k < 10")
        rows = df.groupBy("k").agg({"v": "sum"}).collect()
        assert len(rows) == 10


class SparkWrite:
    params = [PATHS]
    param_names = ["impl"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, impl):
        import pyarrow as pa

        from paimon_engine.catalog import FileSystemCatalog
        self.spark = _session()
        self.root = tempfile.mkdtemp(prefix="bench-spark-w-")
        self.loc = os.path.join(self.root, "t")
        FileSystemCatalog(self.root).create_table_at(self.loc, pa.schema([("id", pa.int64()), ("k", pa.int32()),
                                                                          ("s", pa.string())]))
        self.df = self.spark.range(0, W, numPartitions=2).selectExpr(
            "id", "cast(id % 1000 as int) AS k", "concat('s', id % 977) AS s").cache()
        self.df.count()

    def teardown(self, impl):
        self.df.unpersist()
        shutil.rmtree(self.root, ignore_errors=True)

    def time_write(self, impl):
        if impl == "paimon_engine":
            self.df.write.format("paimon_engine").mode("append").save(self.loc)
        elif impl == "paimon_engine_read_table":
            from paimon_engine.spark import write_table
            write_table(self.df, self.loc)
        else:
            self.df.write.mode("overwrite").parquet(os.path.join(self.root, "parquet"))
