"""Iceberg spec concepts: table metadata (v1/v2/v3), schemas and their evolution, partition specs and transforms,
sort orders, snapshots (resolution, live files), manifests and manifest lists, and single-value conversions.

This layer knows files and metadata only: it imports nothing from ``scan``, ``table`` or ``catalog``.
Submodules are imported lazily so ``import paimon_engine.spec`` stays fast.
"""

from __future__ import annotations

import importlib

__all__ = ["Schema", "PartitionSpec", "SortOrder", "TableMetadata", "Snapshot", "DataFile", "ManifestEntry",
           "ManifestFile", "parse_transform", "resolve_snapshot"]

_WHERE = {"Schema": "schema", "PartitionSpec": "partitioning", "SortOrder": "sorting",
          "TableMetadata": "metadata", "Snapshot": "metadata", "DataFile": "manifest",
          "ManifestEntry": "manifest", "ManifestFile": "manifest_list", "parse_transform": "transforms",
          "resolve_snapshot": "snapshots"}


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'paimon_engine.spec' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
