"""Spark discovers this module by its ``pyspark_`` prefix and registers ``DefaultSource`` as the
``paimon_engine`` data source; no ``spark.dataSource.register`` call is needed when the package is installed."""

from paimon_engine.spark.source import PaimonEngineDataSource as DefaultSource

__all__ = ["DefaultSource"]
