"""Iceberg-style tables: metadata JSON v1/v2, schemas with evolution, partition specs and transforms, manifests
and manifest lists, catalogs (file-system and SQL), atomic optimistic commits and write operations.

Submodules are imported lazily so ``import paimon_engine.table`` stays fast.
"""

from __future__ import annotations

import importlib

__all__ = ["Schema", "PartitionSpec", "SortOrder", "TableMetadata", "Snapshot", "DataFile", "ManifestEntry",
           "ManifestFile", "parse_transform", "FileSystemCatalog", "SqlCatalog", "load_catalog", "Table"]

_WHERE = {"Schema": "schema", "PartitionSpec": "partitioning", "SortOrder": "sorting",
          "TableMetadata": "metadata", "Snapshot": "metadata", "DataFile": "manifest",
          "ManifestEntry": "manifest", "ManifestFile": "manifest_list", "parse_transform": "transforms",
          "FileSystemCatalog": "catalog", "SqlCatalog": "catalog", "load_catalog": "catalog", "Table": "table"}


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'paimon_engine.table' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
