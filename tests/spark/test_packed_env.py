"""The cluster recipe of docs/spark.md, run locally: Python workers use a venv-pack'ed environment.

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


def test_packed_environment_is_used_by_local_workers(tmp_path):
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java (no java on PATH and JAVA_HOME unset)")
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e .[spark])")
    venv_pack = pytest.importorskip("venv_pack", reason="venv-pack is not installed (the test extra has it)")

    # a table with .row data files and a file index, so workers need the compiled kernels
    from paimon_engine.table.catalog import FileSystemCatalog
    loc = str(tmp_path / "tbl")
    t = FileSystemCatalog(str(tmp_path)).create_table_at(
        loc, pa.schema([("id", pa.int64()), ("k", pa.int32())]),
        properties={"write.format.default": "row", "file-index.bitmap.columns": "k"})
    t.append(pa.table({"id": pa.array(range(1000), pa.int64()), "k": pa.array([i % 10 for i in range(1000)],
                                                                              pa.int32())}))

    # the environment to ship: a wheel of this checkout in a fresh venv, packed
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(dist),
          str(REPO)], timeout=1200)
    env = tmp_path / "env"
    _run([sys.executable, "-m", "venv", str(env)])
    _run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", *glob.glob(str(dist / "*.whl")),
          "pandas"], timeout=1200)
    archive = tmp_path / "environment.tar.gz"
    venv_pack.pack(prefix=str(env), output=str(archive), compress_level=1)
    shutil.rmtree(env)  # from here on the environment exists only as the archive
    # Python data sources also start Python workers on the driver (schema, planning, filter pushdown), from its
    # working directory: in client mode the archive is unpacked there too (docs/spark.md), as here
    import tarfile
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "environment", filter="tar")  # our own archive; venv links to the base python

    job = tmp_path / "job.py"
    job.write_text(JOB)
    out = tmp_path / "out.json"
    run_env = dict(os.environ, PYSPARK_PYTHON="./environment/bin/python", PYSPARK_DRIVER_PYTHON=sys.executable,
                   SPARK_LOCAL_IP="127.0.0.1")
    run_env.pop("PYTHONPATH", None)
    submit = Path(sys.executable).parent / "spark-submit"
    _run([str(submit), "--master", "local[2]", "--conf", f"spark.archives={archive}#environment",
          "--conf", "spark.ui.enabled=false", "--conf", "spark.log.level=ERROR", "--conf", "spark.driver.host=127.0.0.1",
          "--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.sql.python.filterPushdown.enabled=true",
          str(job), loc, str(out)],
         env=run_env, cwd=str(tmp_path), timeout=900)

    result = json.loads(out.read_text())
    assert result["count"] == 1000 and result["hits"] == 100
    test_env = str(Path(sys.prefix).resolve())
    for executable, module, kernels in result["workers"]:
        assert "/environment/" in executable, executable
        assert "/environment/" in module and not module.startswith(test_env), module
        assert kernels == "cython"
