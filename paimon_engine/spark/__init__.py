"""PySpark data source ``paimon_engine`` for tables and ``.row`` files.

``spark.read.format("paimon_engine").load(path)`` reads a table (planned once on the driver, tasks read in the
executors, filters pushed into the scan) or ``.row`` files (``option("format", "row")`` or a ``.row`` path, with
``option("schema", ...)``); ``df.write.format("paimon_engine").mode("append"|"overwrite").save(path)`` writes data
files in the executors and commits one snapshot on the driver. :func:`delete_rows` and :func:`upsert` turn a
DataFrame into an equality-delete commit. :func:`read_table` and :func:`write_table` read and write tables
through ``mapInArrow`` (Spark 3.3 and later, Spark 4 too).

The data source is registered automatically through the top-level module ``pyspark_paimon_engine`` (Spark imports
every ``pyspark_*`` module and registers its ``DefaultSource``); :func:`register` does it explicitly.
"""

from __future__ import annotations

__all__ = ["PaimonEngineDataSource", "register", "read_table", "write_table", "delete_rows", "upsert",
           "SHORT_NAME"]

SHORT_NAME = "paimon_engine"


def __getattr__(name):
    if name == "PaimonEngineDataSource":
        from .source import PaimonEngineDataSource
        return PaimonEngineDataSource
    if name in ("read_table", "write_table"):
        from . import dataframes
        return getattr(dataframes, name)
    if name in ("delete_rows", "upsert"):
        from . import mutations
        return getattr(mutations, name)
    raise AttributeError(f"module 'paimon_engine.spark' has no attribute {name!r}")


def register(spark) -> None:
    """``spark.dataSource.register`` the ``paimon_engine`` source on a session, bound to the session's split
    settings (``spark.sql.files.maxPartitionBytes``, ``spark.sql.files.openCostInBytes``, default parallelism):
    a Python data source cannot read the session's configuration by itself."""
    from .options import session_split_defaults
    from .source import PaimonEngineDataSource
    bound = type("SessionBoundDataSource", (PaimonEngineDataSource,),
                 {"session_defaults": session_split_defaults(spark), "__module__": __name__})
    spark.dataSource.register(bound)
