"""Scan planning with pruning, delete application, and reads into Arrow, pandas and NumPy.

Entry point: ``table.scan(filter=None, columns=None, snapshot_id=None, as_of=None, ref=None)`` ->
:class:`TableScan` (``plan_files``, ``plan_tasks``, ``to_arrow``, ``to_pandas``, ``to_numpy``, ``to_batches``,
``count``, ``between``). Submodules load lazily.
"""

from __future__ import annotations

import importlib

__all__ = ["TableScan", "FileScanTask", "CombinedScanTask", "DeleteFile", "DeleteFileIndex", "EqualityDeleteSet",
           "InclusiveMetricsEvaluator", "StrictMetricsEvaluator", "TaskReader"]

_WHERE = {"TableScan": "planner", "FileScanTask": "tasks", "CombinedScanTask": "tasks", "DeleteFile": "delete_index",
          "DeleteFileIndex": "delete_index", "EqualityDeleteSet": "deletes",
          "InclusiveMetricsEvaluator": "evaluators", "StrictMetricsEvaluator": "evaluators", "TaskReader": "reader"}


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'paimon_engine.scan' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
