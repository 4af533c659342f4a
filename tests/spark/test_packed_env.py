"""The cluster recipe of docs/spark.md, run locally: Python workers use a venv-pack'ed environment, on local[2]
and on a local-cluster (separate executor JVMs).

Builds a wheel of this checkout, installs it into a fresh venv, packs that venv with venv-pack, removes the venv,
and runs a job with ``spark-submit --master local[2] --conf spark.archives=environment.tar.gz#environment`` and
``PYSPARK_PYTHON=./environment/bin/python`` (the archive also unpacked in the driver's working directory, as
client mode needs for Python data sources): the Python workers must run the packed interpreter and import the
engine and its compiled kernels from the packed environment, not from the test environment.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

REPO = Path(__file__).resolve().parents[2]

JOB = textwrap.dedent('''
    import json
    import sys

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("packed-env").getOrCreate()
    table, out = sys.argv[1], sys.argv[2]
    df = spark.read.format("paimon_engine").load(table)
    count = df.count()
    hits = df.filter("k = 3").count()

    from pyspark.sql.datasource import DataSource, DataSourceReader

    class ProbeReader(DataSourceReader):
        def read(self, partition):
            import sys
            import paimon_engine
            from paimon_engine import _speedups
            yield (sys.executable, paimon_engine.__file__, _speedups.implementation("rowcodec"))

    class Probe(DataSource):
        @classmethod
        def name(cls):
            return "probe"

        def schema(self):
            return "executable string, module string, kernels string"

        def reader(self, schema):
            return ProbeReader()

    spark.dataSource.register(Probe)
    workers = [tuple(r) for r in spark.read.format("probe").load().collect()]
    with open(out, "w") as f:
        json.dump({"count": count, "hits": hits, "workers": workers}, f)
    spark.stop()
''')


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode:
        raise AssertionError(f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


CLUSTER_JOB = textwrap.dedent('''
    import json
    import os
    import sys

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("cluster").getOrCreate()
    uri, wh, out = sys.argv[1], sys.argv[2], sys.argv[3]
    from paimon_engine.spark import delete_rows, read_table, write_table
    cat = {"uri": uri, "warehouse": wh}
    res = {}
    df = read_table(spark, "db.events", **cat)
    res["count"] = df.count()
    res["sum"] = df.agg({"id": "sum"}).collect()[0][0]
    res["k1"] = read_table(spark, "db.events", row_filter="k = 1", **cat).count()
    src = (spark.read.format("paimon_engine").option("catalog.uri", uri).option("catalog.warehouse", wh)
           .load("db.events"))
    res["source_count"] = src.count()
    res["source_k2"] = src.filter("k = 2").count()
    new = spark.range(100_000, 100_400, numPartitions=4).selectExpr("id", "cast(id % 4 as int) AS k",
                                                                     "concat('w', id) AS name")
    write_table(new, "db.events", **cat)
    new.selectExpr("id + 1000 AS id", "k", "name").write.format("paimon_engine") \\
        .option("catalog.uri", uri).option("catalog.warehouse", wh).mode("append").save("db.events")
    delete_rows(spark.range(100_000, 100_010).selectExpr("id", "cast(id % 4 as int) AS k"), "db.events",
                key_columns=["id"], options={"catalog.uri": uri, "catalog.warehouse": wh})
    res["after"] = read_table(spark, "db.events", **cat).count()

    def where(it):
        import paimon_engine
        for _ in it:
            pass
        yield (sys.executable, paimon_engine.__file__, os.getcwd())
    res["workers"] = [tuple(r) for r in spark.sparkContext.parallelize(range(8), 8).mapPartitions(where)
                      .collect()]
    with open(out, "w") as f:
        json.dump(res, f)
    spark.stop()
''')


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """environment.tar.gz of a fresh venv holding a wheel of this checkout, and a directory where it is
    unpacked as ``environment`` (the driver's working directory in client mode)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java (no java on PATH and JAVA_HOME unset)")
    pytest.importorskip("pyspark.sql.datasource", reason="the jobs use the data source (Spark 4)")
    venv_pack = pytest.importorskip("venv_pack", reason="venv-pack is not installed (the test extra has it)")
    tmp = tmp_path_factory.mktemp("packed")
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(dist),
          str(REPO)], timeout=1200)
    env = tmp / "env"
    # without the PYTHONPATH the Spark fixtures set: pip would find this checkout's egg-info through it, call
    # the package already installed and leave it out of the environment
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "venv", str(env)], env=clean)
    _run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", *glob.glob(str(dist / "*.whl")),
          "pandas"], timeout=1200, env=clean)
    check = subprocess.run([str(env / "bin" / "python"), "-c", "import paimon_engine, sys; print(paimon_engine.__file__)"],
                           env=clean, capture_output=True, text=True, cwd=str(tmp))
    assert check.returncode == 0 and str(env) in check.stdout, f"the packed environment lacks the package: {check}"
    archive = tmp / "environment.tar.gz"
    venv_pack.pack(prefix=str(env), output=str(archive), compress_level=1)
    shutil.rmtree(env)  # from here on the environment exists only as the archive
    # Python data sources also start Python workers on the driver (schema, planning), from its working
    # directory: in client mode the archive is unpacked there too (docs/spark.md), as here
    import tarfile
    with tarfile.open(archive) as tar:
        tar.extractall(tmp / "environment", filter="tar")  # our own archive; venv links to the base python
    return archive, tmp


def _submit(archive, cwd, master, args, extra_env=None):
    # the driver runs the packed interpreter too: Spark starts the data source's planning workers on the driver
    # with the driver's Python, and the test interpreter could import another copy of the engine
    run_env = dict(os.environ, PYSPARK_PYTHON="./environment/bin/python",
                   PYSPARK_DRIVER_PYTHON=str(Path(cwd) / "environment" / "bin" / "python"),
                   SPARK_LOCAL_IP="127.0.0.1", **(extra_env or {}))
    if "SPARK_HOME" not in (extra_env or {}):   # spark-submit would look for it with the driver's Python
        import pyspark
        run_env["SPARK_HOME"] = str(Path(pyspark.__file__).parent)
    run_env.pop("PYTHONPATH", None)
    submit = Path(sys.executable).parent / "spark-submit"
    return _run([str(submit), "--master", master, "--conf", f"spark.archives={archive}#environment",
                 "--conf", "spark.ui.enabled=false", "--conf", "spark.log.level=ERROR",
                 "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
                 *args], env=run_env, cwd=str(cwd), timeout=900)


def test_packed_environment_is_used_by_local_workers(packed, tmp_path):
    archive, cwd = packed
    # a table with .row data files and a file index, so workers need the compiled kernels
    from paimon_engine.catalog import FileSystemCatalog
    loc = str(tmp_path / "tbl")
    t = FileSystemCatalog(str(tmp_path)).create_table_at(
        loc, pa.schema([("id", pa.int64()), ("k", pa.int32())]),
        properties={"write.format.default": "row", "file-index.bitmap.columns": "k"})
    t.append(pa.table({"id": pa.array(range(1000), pa.int64()), "k": pa.array([i % 10 for i in range(1000)],
                                                                              pa.int32())}))
    job = tmp_path / "job.py"
    job.write_text(JOB)
    out = tmp_path / "out.json"
    _submit(archive, cwd, "local[2]", [str(job), loc, str(out)])
    result = json.loads(out.read_text())
    assert result["count"] == 1000 and result["hits"] == 100
    test_env = str(Path(sys.prefix).resolve())
    for executable, module, kernels in result["workers"]:
        assert "/environment/" in executable, executable
        assert "/environment/" in module and not module.startswith(test_env), module
        assert kernels == "cython"


def test_local_cluster_reads_and_writes_a_table_with_deletes(packed, tmp_path):
    """local-cluster[2,1,1024]: a master, two workers and two executor JVMs, each unpacking the archive in its
    own working directory. SPARK_HOME is a directory of links to the pip-installed PySpark's jars and scripts
    plus a writable ``work`` directory (the executors' working directories)."""
    import numpy as np

    from paimon_engine.expressions import col
    from paimon_engine.catalog import SqlCatalog
    archive, cwd = packed
    uri = f"sqlite:///{tmp_path}/cat.db"
    cat = SqlCatalog("default", uri=uri, warehouse=str(tmp_path))
    cat.create_namespace("db")
    n = 40_000
    t = cat.create_table("db.events", pa.schema([("id", pa.int64()), ("k", pa.int32()), ("name", pa.string())]),
                         [("k", "identity")], properties={"write.target-file-size-bytes": str(100_000)})
    t.append(pa.table({"id": pa.array(np.arange(n), pa.int64()), "k": pa.array(np.arange(n) % 4, pa.int32()),
                       "name": pa.array([f"n{i % 97}" for i in range(n)])}))
    t.delete(col("id") < 500)                                                      # position deletes
    t.delete(col("name") == "n5", mode="equality", equality_columns=["name"])     # equality deletes
    before = t.scan().to_arrow()

    import pyspark
    home = tmp_path / "spark-home"
    home.mkdir()
    for d in ("bin", "sbin", "jars", "python", "conf"):
        if (Path(pyspark.__file__).parent / d).exists():
            (home / d).symlink_to(Path(pyspark.__file__).parent / d)
    (home / "work").mkdir()
    job = tmp_path / "cluster_job.py"
    job.write_text(CLUSTER_JOB)
    out = tmp_path / "out.json"
    _submit(archive, cwd, "local-cluster[2,1,1024]",
            ["--conf", "spark.executor.memory=512m", "--conf", "spark.sql.shuffle.partitions=2",
             str(job), uri, str(tmp_path), str(out)], extra_env={"SPARK_HOME": str(home)})
    res = json.loads(out.read_text())
    assert res["count"] == res["source_count"] == before.num_rows
    assert res["sum"] == sum(before.column("id").to_pylist())
    assert res["k1"] == t.scan(filter=col("k") == 1).count()
    assert res["source_k2"] == t.scan(filter=col("k") == 2).count()
    t.refresh()
    assert res["after"] == t.scan().count() == before.num_rows + 800 - 10
    ids = set(t.scan().to_arrow().column("id").to_pylist())
    assert set(range(100_010, 100_400)) <= ids and not ids & set(range(100_000, 100_010))
    assert set(range(101_000, 101_400)) <= ids
    dirs = {w[2] for w in res["workers"]}
    assert len(dirs) == 2 and all(str(home / "work") in d for d in dirs)   # two executor JVMs
    for executable, module, _ in res["workers"]:
        assert "/environment/" in executable and "/environment/" in module
