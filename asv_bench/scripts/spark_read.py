"""Spark read of one table three ways (a documented benchmark; Spark's start-up makes it a poor asv fit):

1. ``spark.read.format("paimon_engine")`` on our table (Parquet data files);
2. ``spark.read.parquet`` of the same data files (Spark's native reader);
3. pyiceberg ``scan().to_pandas()`` then ``spark.createDataFrame`` (the path users take today).

Each read is forced with a full aggregation over every column. Usage:
``python asv_bench/scripts/spark_read.py [--rows 2000000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import numpy as np
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from paimon_engine.catalog import SqlCatalog

    wh = tempfile.mkdtemp(prefix="spark-bench-")
    uri = f"sqlite:///{wh}/cat.db"
    cat = SqlCatalog("default", uri=uri, warehouse=wh)
    cat.create_namespace("db")
    n = args.rows
    rng = np.random.default_rng(0)
    data = pa.table({"id": pa.array(np.arange(n), pa.int64()), "k": pa.array(rng.integers(0, 8, n), pa.int32()),
                     "v": pa.array(rng.random(n)), "s": pa.array([f"s{i % 1000}" for i in range(n)])})
    t = cat.create_table("db.bench", data.schema, properties={"write.target-file-size-bytes": str(8 << 20)})
    for i in range(0, n, n // 4):
        t.append(data.slice(i, n // 4))
    files = [e.data_file.file_path for e in t.data_files()]

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.python.filterPushdown.enabled", "true")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    agg = ["count(*) AS c", "sum(id) AS a", "sum(k) AS b", "sum(v) AS d", "max(s) AS e"]

    def ours():
        return spark.read.format("paimon_engine").option("catalog.uri", uri).option("catalog.warehouse", wh) \
            .load("db.bench").selectExpr(*agg).collect()

    def native():
        return spark.read.parquet(*files).selectExpr(*agg).collect()

    def via_pyiceberg():
        from pyiceberg.catalog.sql import SqlCatalog as PyCat
        pdf = PyCat("default", uri=uri, warehouse=wh).load_table("db.bench").scan().to_pandas()
        return spark.createDataFrame(pdf).selectExpr(*agg).collect()

    results = {}
    for name, fn in (("paimon_engine", ours), ("spark parquet", native), ("pyiceberg->pandas->spark", via_pyiceberg)):
        fn()  # warm-up (worker start, JIT)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        assert out[0].c == n, (name, out)
        results[name] = min(times)
    base = results["paimon_engine"]
    print(f"{n:,} rows, local[2], best of {args.repeat}")
    for name, s in results.items():
        print(f"  {name:28s} {s:7.2f} s   ({s / base:.2f}x of paimon_engine)")
    spark.stop()


if __name__ == "__main__":
    main()
