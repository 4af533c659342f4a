import os
import shutil
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    """One quiet local[2] session for the whole test run (cold start ~10 s)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark tests need Java (no java on PATH and JAVA_HOME unset)")
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e .[spark])")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("paimon_engine-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
               .config("spark.sql.python.filterPushdown.enabled", "true")
               .config("spark.python.worker.reuse", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
