import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = str(Path(__file__).resolve().parents[2])


def spark_env():
    """Environment for Spark's Python workers: this interpreter, and this checkout first on their path (the JVM
    starts them; they do not see the test's sys.path)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    paths = [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != REPO]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)


def need_spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java (no java on PATH and JAVA_HOME unset)")
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e .[spark])")


@pytest.fixture(scope="session")
def spark():
    """One quiet local[4] session for the whole test run (cold start ~10 s), with Spark's defaults otherwise
    (filter pushdown of Python data sources is off unless a test turns it on)."""
    need_spark()
    spark_env()
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[4]").appName("paimon_engine-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
               .config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
               .config("spark.python.worker.reuse", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
